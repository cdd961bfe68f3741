# Draws a ring all-reduce trace (the .tsv that `busbw --trace FILE` writes next to FILE) as one
# row per rank: blue = send+receive of one chunk (sendrecv), orange = reduce, purple = a fused
# receive-and-reduce step (sendrecv_reduce), grey = the whole call.
#   gnuplot -e "in='/tmp/ring.json.tsv'; out='chapters/03_collectives/ch03_ring_trace.svg'" \
#           chapters/03_collectives/trace.gp     (add xmax=5 to fix the time axis at 5 ms)
#   gnuplot -e "in='/tmp/ring.json.fused.json.tsv'; out='…/ch03_ring_fused_trace.svg'; fused=1" …
set terminal svg size 900,330 font "sans,11" background rgb "white"
set output out
stats in using 2 nooutput
t0 = STATS_min
stats in using 1 nooutput
ranks = STATS_max + 1
set xlabel "time (ms) since the all-reduce started"
set ylabel "rank"
set yrange [ranks - 0.5:-0.5]
set ytics 1
set grid xtics
if (exists("xmax")) set xrange [0:xmax]
set key below horizontal
set style fill solid 0.9 border rgb "white"
set termoption noenhanced
ms(x) = (x - t0) / 1000.0
is(c) = strcol(4) eq c
box(c) = is(c) ? (ms($2) + ms($3)) / 2 : 1/0
half = "((ms($3) - ms($2)) / 2)"
if (exists("fused")) {
  plot in using (box("collective")):1:@half:(0.42) with boxxyerror lc rgb "#dddddd" \
          title "all_reduce call", \
       in using (box("sendrecv_reduce")):1:@half:(0.3) with boxxyerror lc rgb "#7a4fa0" \
          title "sendrecv_reduce (receive and add in one pass)", \
       in using (box("sendrecv")):1:@half:(0.3) with boxxyerror lc rgb "#3a6fb0" \
          title "sendrecv (all-gather step)"
} else {
  plot in using (box("collective")):1:@half:(0.42) with boxxyerror lc rgb "#dddddd" \
          title "all_reduce call", \
       in using (box("sendrecv")):1:@half:(0.3) with boxxyerror lc rgb "#3a6fb0" \
          title "sendrecv (one chunk out, one in)", \
       in using (box("reduce")):1:@half:(0.3) with boxxyerror lc rgb "#e08a1e" \
          title "reduce (into own chunk)"
}
