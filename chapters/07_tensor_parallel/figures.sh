#!/usr/bin/env bash
# Draws the chapter's three diagrams as SVG next to this script (they are committed; rerun after
# changing this file): bash chapters/07_tensor_parallel/figures.sh
#   ch07_column_row_split.svg  the MLP on 2 ranks: W_fc split by columns, W_proj by rows, g sums
#   ch07_operators.svg         where f, g (tensor parallel) and gather, scatter (+ sequence
#                            parallel) sit, and what each does forward and backward
#   ch07_moe_all_to_all.svg    an MoE layer on 2 ranks: dispatch to the experts' ranks and back
# The load-balance chart (ch07_moe_load.svg) comes from the stage: see moe_load.gp.
set -euo pipefail
cd "$(dirname "$0")"

blue="#4c72b0"; orange="#dd8452"; green="#55a868"; grey="#8c8c8c"; light="#eeeeee"; red="#c44e52"

head() {  # width height
  printf '<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="sans-serif" font-size="12">\n' "$1" "$2" "$1" "$2"
  printf '<rect width="100%%" height="100%%" fill="white"/>\n'
  printf '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#333"/></marker></defs>\n'
}
box() {  # x y w h fill [label] [label colour]
  printf '<rect x="%s" y="%s" width="%s" height="%s" fill="%s" stroke="#333" stroke-width="1"/>\n' "$1" "$2" "$3" "$4" "$5"
  if [[ -n "${6:-}" ]]; then
    printf '<text x="%s" y="%s" text-anchor="middle" dominant-baseline="middle" fill="%s">%s</text>\n' \
      "$(($1 + $3 / 2))" "$(($2 + $4 / 2))" "${7:-#111}" "$6"
  fi
}
text() {  # x y anchor text [size] [weight]
  printf '<text x="%s" y="%s" text-anchor="%s" font-size="%s" font-weight="%s">%s</text>\n' "$1" "$2" "$3" "${5:-12}" "${6:-normal}" "$4"
}
arrow() {  # x1 y1 x2 y2
  printf '<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333" stroke-width="1.3" marker-end="url(#arrow)"/>\n' "$1" "$2" "$3" "$4"
}
operator() {  # cx cy label fill
  printf '<circle cx="%s" cy="%s" r="15" fill="%s" stroke="#333"/>\n' "$1" "$2" "$4"
  printf '<text x="%s" y="%s" text-anchor="middle" dominant-baseline="middle" font-weight="bold" fill="white">%s</text>\n' "$1" "$2" "$3"
}

# --- 1. The column/row split ------------------------------------------------------------------
{
  head 800 370
  text 400 22 middle "The MLP on t = 2 ranks: z = GELU(x·A)·B with A = [A1 | A2] by columns, B = [B1 ; B2] by rows" 13 bold
  for r in 0 1; do
    y=$((60 + r * 130)); c=$([[ $r == 0 ]] && echo "$blue" || echo "$orange"); n=$((r + 1))
    text 20 $((y + 45)) start "rank $r" 12 bold
    box 80 "$y" 70 90 "$light" "x"
    text 115 $((y + 105)) middle "[N, C], whole" 10
    text 165 $((y + 48)) middle "·" 20
    box 180 $((y + 10)) 45 70 "$c" "A$n" white
    text 202 $((y + 95)) middle "[C, 4C/t]" 10
    text 240 $((y + 48)) middle "=" 16
    box 255 "$y" 45 90 "$c" "y$n" white
    text 277 $((y + 105)) middle "GELU: [N, 4C/t]" 10
    text 315 $((y + 48)) middle "·" 20
    box 330 $((y + 22)) 70 45 "$c" "B$n" white
    text 365 $((y + 82)) middle "[4C/t, C]" 10
    text 415 $((y + 48)) middle "=" 16
    box 430 "$y" 80 90 "$c" "z$n, partial" white
    text 470 $((y + 105)) middle "[N, C]" 10
    arrow 510 $((y + 45)) 572 $((y + 45 + (1 - 2 * r) * 52))
  done
  operator 585 170 "g" "$red"
  arrow 600 170 640 170
  box 640 125 110 90 "$light" "z = z1 + z2"
  text 695 232 middle "every rank: [N, C]" 10
  text 695 80 middle "column-parallel A:" 11
  text 695 96 middle "each rank its columns of y" 11
  text 695 265 middle "row-parallel B:" 11
  text 695 281 middle "each rank a partial sum of z" 11
  text 400 335 middle "no communication between A and B: A's output split is B's input split" 11
  text 400 353 middle "g: an all-reduce of N·C elements forward, the identity backward (f, before A, is the reverse)" 11
  printf '</svg>\n'
} > ch07_column_row_split.svg

# --- 2. The operators ---------------------------------------------------------------------------
lane() {  # y title region_fill first_label last_label op1 op2 op1_text op2_text
  local y=$1
  text 20 $((y - 12)) start "$2" 13 bold
  box 10 "$y" 150 50 "$3" "$4"
  operator 182 $((y + 25)) "$6" "$red"
  arrow 160 $((y + 25)) 167 $((y + 25))
  arrow 197 $((y + 25)) 210 $((y + 25))
  box 210 "$y" 110 50 "$blue" "column-parallel" white
  arrow 320 $((y + 25)) 335 $((y + 25))
  box 335 "$y" 60 50 "$blue" "GELU" white
  arrow 395 $((y + 25)) 410 $((y + 25))
  box 410 "$y" 110 50 "$blue" "row-parallel" white
  arrow 520 $((y + 25)) 530 $((y + 25))
  operator 545 $((y + 25)) "$7" "$red"
  arrow 560 $((y + 25)) 575 $((y + 25))
  box 575 "$y" 215 50 "$3" "$5"
  text 182 $((y + 68)) middle "$8" 10
  text 545 $((y + 68)) middle "$9" 10
}
{
  head 800 330
  lane 50 "tensor parallel (Megatron-LM 2019)" "$light" "LayerNorm, all tokens" "residual + dropout, all tokens" \
       "f" "g" "fwd: identity; bwd: all-reduce" "fwd: all-reduce; bwd: identity"
  lane 190 "tensor + sequence parallel (Korthikanti et al. 2022)" "$green" "LayerNorm, N/t tokens" "residual + dropout, N/t tokens" \
       "ag" "rs" "fwd: all-gather; bwd: reduce-scatter" "fwd: reduce-scatter; bwd: all-gather"
  text 400 300 middle "blue: each rank its heads / hidden units (1/t of the weights); grey: whole on every rank; green: each rank 1/t of the tokens" 11
  text 400 318 middle "an all-reduce = reduce-scatter + all-gather: the same bytes, but the green tensors are t times smaller" 11
  printf '</svg>\n'
} > ch07_operators.svg

# --- 3. The MoE all-to-all ----------------------------------------------------------------------
{
  head 840 340
  text 420 22 middle "An MoE layer on 2 ranks, 4 experts (2 per rank), top-1 for clarity" 13 bold
  colours=("$blue" "$orange" "$green" "$red")
  choices=("0 2 1 3 2 0" "3 1 2 2 3 1")
  text 150 48 middle "tokens, coloured by expert" 11
  text 420 48 middle "send buffer: by expert = by rank" 11
  text 680 48 middle "received: by source, then expert" 11
  for r in 0 1; do
    y=$((65 + r * 120))
    read -r -a choice <<< "${choices[$r]}"
    text 20 $((y + 30)) start "rank $r" 12 bold
    for i in 0 1 2 3 4 5; do box $((75 + i * 32)) "$y" 28 50 "${colours[${choice[$i]}]}" "t$i" white; done
    # the send buffer: tokens sorted by expert
    x=300
    for e in 0 1 2 3; do
      for i in 0 1 2 3 4 5; do
        if [[ ${choice[$i]} == "$e" ]]; then box "$x" "$y" 28 50 "${colours[$e]}" "t$i" white; x=$((x + 32)); fi
      done
      [[ $e == 1 ]] && { printf '<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333" stroke-dasharray="4 3"/>\n' $((x - 2)) $((y - 6)) $((x - 2)) $((y + 56)); x=$((x + 6)); }
    done
    arrow 270 $((y + 25)) 295 $((y + 25))
  done
  # received buffers: rank d gets, from each source s, its experts' rows (source 0 first)
  for d in 0 1; do
    y=$((65 + d * 120)); x=580
    for s in 0 1; do
      read -r -a choice <<< "${choices[$s]}"
      for e in $((2 * d)) $((2 * d + 1)); do
        for i in 0 1 2 3 4 5; do
          if [[ ${choice[$i]} == "$e" ]]; then box "$x" "$y" 28 50 "${colours[$e]}" "r$s" white; x=$((x + 32)); fi
        done
      done
      x=$((x + 8))
    done
  done
  # rows from source s to destination d: the tokens of s that chose one of d's experts
  rows() { local n=0; read -r -a c <<< "${choices[$1]}"; for e in "${c[@]}"; do [[ $((e / 2)) == "$2" ]] && n=$((n + 1)); done; echo "$n"; }
  arrow 505 85 573 85; text 540 78 middle "$(rows 0 0) rows" 10
  arrow 505 112 573 198; text 515 150 middle "$(rows 0 1)" 10
  arrow 505 198 573 112; text 568 150 middle "$(rows 1 0)" 10
  arrow 505 225 573 225; text 540 243 middle "$(rows 1 1) rows" 10
  text 420 290 middle "dispatch: first an all-to-all of the counts (E/ranks numbers per pair), then the rows, uneven counts;" 11
  text 420 307 middle "the experts run on what arrived; combine sends each output back the same way and adds gate × output to its token." 11
  text 420 324 middle "A full expert drops the rest (capacity ⌈factor · k · N / E⌉); a dropped choice contributes nothing." 11
  printf '</svg>\n'
} > ch07_moe_all_to_all.svg

echo "figures: wrote ch07_column_row_split.svg, ch07_operators.svg, ch07_moe_all_to_all.svg in $(pwd)"
