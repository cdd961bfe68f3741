# Colocated RL on one 80 GiB GPU, from the stage's results/ch09_colocated_rl.csv:
#   gnuplot -e "in='results/ch09_colocated_rl.csv'; out='chapters/09_memory_accounting/ch09_colocated_rl.svg'" \
#           chapters/09_memory_accounting/colocated_rl.gp
# One stacked bar per phase (two cycles of rollout + training), colocated then time-sliced: what
# holds the GPU's memory, against the 79 GiB budget left after 1 GiB of overhead.
set terminal svg size 760,320 font "sans,11" background rgb "white"
set output out
set datafile separator ","
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border rgb "white"
set boxwidth 0.7
set grid ytics
set termoption noenhanced
set key outside right top Left reverse
set yrange [0:90]
set ylabel "GiB on the GPU"
set xtics rotate by -30 left
set arrow from graph 0, first 79 to graph 1, first 79 nohead dt 2 lc rgb "#333333"
set label "budget 79 GiB" at graph 0.01, first 82
plot in every ::1 using 3:xtic(stringcolumn(1) eq "colocated" ? "colo. ".stringcolumn(2) : "sliced ".stringcolumn(2)) \
        title "training state" lc rgb "#dd8452", \
     '' every ::1 using 4 title "training activations" lc rgb "#c44e52", \
     '' every ::1 using 5 title "inference weights" lc rgb "#4c72b0", \
     '' every ::1 using 6 title "KV pool" lc rgb "#55a868"
