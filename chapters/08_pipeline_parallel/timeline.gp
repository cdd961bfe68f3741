# Draws a pipeline timeline (the .tsv the pipeline stage writes: rank start end op name) as one
# row per rank: blue = forward F, orange = backward B (input gradient, or both gradients when the
# schedule does not split them), green = weight gradient W; white gaps are the bubble.
#   gnuplot -e "in='RESULTS/ch08_timeline_1f1b.tsv'; out='chapters/08_pipeline_parallel/ch08_timeline_1f1b.svg'; title='1F1B'" \
#           chapters/08_pipeline_parallel/timeline.gp
# The real run's timeline (ch08_executed_<schedule>.tsv, in ms): add xlabel='time (ms), real run'.
if (out[strlen(out)-2:] eq "png") { set terminal png size 900,230 font "sans,9" background rgb "white" } else { set terminal svg size 900,230 font "sans,10" background rgb "white" }
set output out
stats in using 1 nooutput
ranks = STATS_max + 1
stats in using 3 nooutput
tmax = STATS_max
if (exists("title")) set title title
if (!exists("xlabel")) xlabel = "time (unit costs: F = B = W = 1; a B that is not split from W lasts 2)"
set xlabel xlabel
set ylabel "rank"
set yrange [ranks - 0.5:-0.5]
set xrange [0:tmax]
set ytics 1
set key off
set style fill solid 0.9 border rgb "white"
set termoption noenhanced
is(c) = strcol(4) eq c
box(c) = is(c) ? ($2 + $3) / 2 : 1/0
plot in using (box("F")):1:(($3 - $2) / 2):(0.4) with boxxyerror lc rgb "#3a6fb0", \
     in using (box("B")):1:(($3 - $2) / 2):(0.4) with boxxyerror lc rgb "#e08a1e", \
     in using (box("W")):1:(($3 - $2) / 2):(0.4) with boxxyerror lc rgb "#3f9a4a", \
     in using (($2 + $3) / 2):1:5 with labels font "sans,7" tc rgb "white"
