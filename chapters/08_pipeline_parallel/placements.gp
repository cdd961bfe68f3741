# Step time of each placement of a 2 x 2 grid on 2 namespace nodes, measured and predicted by the
# alpha-beta model, for two link rates side by side (the .dat files `pipeline --backend mpi
# --cluster` writes; one run per rate under tools/cluster/cluster.sh run --rate RATE):
#   gnuplot -e "fast='results/1gbit/ch08_cluster_placements.dat'; slow='results/10mbit/ch08_cluster_placements.dat'; out='chapters/08_pipeline_parallel/ch08_placements.svg'" \
#           chapters/08_pipeline_parallel/placements.gp
set terminal svg size 900,380 font "sans,11" background rgb "white"
set output out
set datafile separator "\t"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border rgb "white"
set boxwidth 0.9
set ylabel "step time (ms)"
set grid ytics
set yrange [0:*]
set xtics rotate by -30 font ",9"
set key top left
set termoption noenhanced
set multiplot layout 1,2
set title "links of 1 Gbit/s"
plot fast using 2:xtic(1) title "measured (median)" lc rgb "#4c72b0", \
     fast using 5 title "alpha-beta model" lc rgb "#dd8452"
set title "links of 10 Mbit/s"
plot slow using 2:xtic(1) title "measured (median)" lc rgb "#4c72b0", \
     slow using 5 title "alpha-beta model" lc rgb "#dd8452"
unset multiplot
