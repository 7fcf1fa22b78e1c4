#!/usr/bin/env bash
# A/B: the loop's recipe for 0.2 CPU hours with the trainer before (old) and after (new) ConfigureBlas.
cd /work/main
out=/tmp/ab/results.txt
echo "# $(date -u +%FT%TZ) $(uname -n) $(nproc) cores load $(cut -d' ' -f1-3 /proc/loadavg) commit $(git rev-parse --short HEAD)" > $out
for arm in new old old new; do
  cp /tmp/zt-$arm build/zerofarm-torch
  run=/tmp/ab/run-$arm-$(date +%s)
  t0=$(date +%s)
  ./build/zerofarm loop --recipe connect4 --out $run --cpu-hours 0.2 --eval-every 100000 > $run.log 2>&1
  rc=$?
  pos=$(grep -h "positions" $run.log | grep -oE "\(([0-9]+) positions" | grep -oE "[0-9]+" | paste -sd+ | bc)
  echo "$arm rc=$rc wall=$(( $(date +%s) - t0 ))s $(tr '\n' ' ' < $run/train/state.txt) cpu_s=$(cat $run/eval/loop-cpu-seconds.txt) positions=$pos $(grep -h 'zerofarm train: [0-9]' $run.log | tail -1 | cut -c1-160)" >> $out
done
cp /tmp/zt-new build/zerofarm-torch
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out
