# The MoE router's load per expert before and after training on the load-balancing loss (the
# data file `tp` writes next to its results):
#   gnuplot -e "in='results/ch07_moe_load.dat'; out='chapters/07_tensor_parallel/ch07_moe_load.svg'; steps=100; capacity=160" \
#           chapters/07_tensor_parallel/moe_load.gp
set terminal svg size 640,300 font "sans,11" background rgb "white"
set output out
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border rgb "white"
set boxwidth 0.9
set xlabel "expert"
set ylabel "choices routed to it"
set key top right
set grid ytics
set yrange [0:*]
set termoption noenhanced
set arrow from graph 0, first capacity to graph 1, first capacity nohead dashtype 2 lc rgb "#333333"
set label sprintf("capacity %d: choices above it are dropped", capacity) at graph 0.02, first capacity offset 0,0.7
plot in using 2:xtic(1) title "router at initialisation" lc rgb "#c44e52", \
     in using 3 title sprintf("after %d steps on the auxiliary loss", steps) lc rgb "#4c72b0"
