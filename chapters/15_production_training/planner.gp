# What each layout adds to the compute of Llama-2 70B on 8 nodes of 8 H100s (the planner's model,
# results/ch15_planner_llama2-70b_8n_terms.csv from `bazel run -c opt
# //chapters/15_production_training:planner -- --top 6`):
#   gnuplot -e "in='results/ch15_planner_llama2-70b_8n_terms.csv'; \
#               out='chapters/15_production_training/ch15_planner.svg'" \
#           chapters/15_production_training/planner.gp
# One stacked bar per layout (dp, tp, pp, ZeRO stage z, order innermost first), in seconds per optimizer step above the least compute of any plan
# (34.8 s): the leaders, then the best plan whose TP group crosses nodes.
set terminal svg size 760,380 font "sans,11" background rgb "white"
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
set key inside top left Left reverse font "sans,10"
set title "Llama-2 70B on 64 H100s: seconds a step adds to 34.8 s of compute (modelled)"
set ylabel "seconds per step"
set xtics rotate by -30 font "sans,9"
plot in using 2:xtic(1) lc rgb "#8172b2", \
     '' using 3 lc rgb "#c44e52", \
     '' using 4 lc rgb "#55a868", \
     '' using 5 lc rgb "#dd8452", \
     '' using 6 lc rgb "#4c72b0"
