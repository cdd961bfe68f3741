# Llama-2 7B's memory per GPU by category, from the stage's sweep (results/ch09_sweep.csv):
#   gnuplot -e "in='results/ch09_sweep.csv'; out='chapters/09_memory_accounting/ch09_memory.svg'" \
#           chapters/09_memory_accounting/memory.gp
# Left: one GPU, micro-batch 1, no recomputation, sequence length 1k-8k. Right: 8 GPUs at 4k, by
# ZeRO stage with selective recomputation. Stacked bars in GiB.
set terminal svg size 760,320 font "sans,11" background rgb "white"
set output out
set datafile separator ","
set key autotitle columnhead
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border rgb "white"
set boxwidth 0.7
set grid ytics
set yrange [0:*]
set termoption noenhanced
set key top left Left reverse
set yrange [0:600]
set multiplot layout 1,2
set title "1 GPU: by sequence length"
set xlabel "sequence length"
set ylabel "GiB per GPU"
plot in every ::0::3 using 3:xtic(2) title "parameters" lc rgb "#4c72b0", \
     '' every ::0::3 using 4 title "gradients" lc rgb "#55a868", \
     '' every ::0::3 using 5 title "optimizer (master+m+v)" lc rgb "#dd8452", \
     '' every ::0::3 using 6 title "activations" lc rgb "#c44e52"
set title "8 GPUs, seq 4096, selective recompute: by ZeRO stage"
set yrange [0:*]
set xlabel "stage"
unset ylabel
set key off
plot in every ::6::9 using 3:xtic(2) lc rgb "#4c72b0", \
     '' every ::6::9 using 4 lc rgb "#55a868", \
     '' every ::6::9 using 5 lc rgb "#dd8452", \
     '' every ::6::9 using 6 lc rgb "#c44e52"
unset multiplot
