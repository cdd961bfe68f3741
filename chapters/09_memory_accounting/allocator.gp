# The caching-allocator simulator replaying the wider trainer's allocations (the stage's
# results/ch09_allocator_timeline.csv):
#   gnuplot -e "in='results/ch09_allocator_timeline.csv'; out='chapters/09_memory_accounting/ch09_allocator.svg'" \
#           chapters/09_memory_accounting/allocator.gp
# MiB after every allocation or release: what the program asked for, what the allocator handed
# out, what it reserved from the device (default, and with expandable segments).
set terminal svg size 760,300 font "sans,11" background rgb "white"
set output out
set datafile separator ","
set termoption noenhanced
set grid
set key at graph 0.98, 0.78
set xlabel "event (allocation or release) in the trace"
set ylabel "MiB"
set yrange [0:*]
mib(x) = x / 1048576.0
plot in skip 1 using 1:(mib($2)) with steps lw 2 lc rgb "#4c72b0" title "requested", \
     '' skip 1 using 1:(mib($3)) with steps lw 1 dt 2 lc rgb "#55a868" title "allocated (rounded blocks)", \
     '' skip 1 using 1:(mib($4)) with steps lw 2 lc rgb "#c44e52" title "reserved, default", \
     '' skip 1 using 1:(mib($5)) with steps lw 2 lc rgb "#dd8452" title "reserved, expandable segments"
