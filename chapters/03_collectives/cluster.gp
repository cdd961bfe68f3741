# Draws busbw_mpi --cluster's table (ch03_cluster_busbw.csv): the ring's busbw
# against the message size, inside a node, across nodes and on the whole world, with the link's
# configured rate and the raw TCP ceiling as lines.
#   gnuplot -e "in='results/ch03_cluster_busbw.csv'; out='chapters/03_collectives/ch03_cluster_busbw.svg'; rate=0.125; tcp=0.1197" \
#           chapters/03_collectives/cluster.gp        (rate, tcp: GB/s, from the table's header)
set terminal svg size 820,480 font "sans,11" background rgb "white"
set output out
set datafile separator ","
set termoption noenhanced
set logscale xy
set xlabel "all-reduce size (KiB)"
set ylabel "busbw (GB/s)"
set grid
set key below horizontal maxrows 3
set xrange [2:32768]
# "4 KiB" or "16 MiB" in KiB
kib(s) = strstrt(s, "MiB") ? real(s[1:strstrt(s, " ") - 1]) * 1024 : real(s[1:strstrt(s, " ") - 1])
# the rows of one placement and algorithm (grep, so that a line joins them)
rows(p, a) = "< grep ',".p.",[0-9]*,".a.",' '".in."'"
plot rows("inside a node", "ring") using (kib(strcol(1))):6 with linespoints lw 2 lc rgb "#1f77b4" pt 7 \
        title "ring, inside a node", \
     rows("across nodes", "ring") using (kib(strcol(1))):6 with linespoints lw 2 lc rgb "#d62728" pt 7 \
        title "ring, across nodes (1 rank each)", \
     rows("whole world", "ring") using (kib(strcol(1))):6 with linespoints lw 2 lc rgb "#2ca02c" pt 7 \
        title "ring, whole world", \
     rate with lines lc rgb "black" dt 3 title "link rate (tbf)", \
     tcp with lines lc rgb "#7f7f7f" dt 4 title "raw TCP measured"
