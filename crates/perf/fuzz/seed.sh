#!/bin/sh
# Seeds the fuzz corpora with small real inputs, generated here (not checked in):
# perf.data files recorded by this machine's perf (file mode, -g, pipe mode, two events)
# and written by kfdo-perf's writer (branch stacks with and without HW_INDEX), and the
# `perf script` text of some of them.
set -eu
cd "$(dirname "$0")"
mkdir -p corpus/perf_data corpus/perf_script
work='i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'
perf record -q -e cpu-clock -o corpus/perf_data/plain.data -- sh -c "$work"
perf record -q -e cpu-clock -g -o corpus/perf_data/callchain.data -- sh -c "$work"
perf record -q -e cpu-clock,task-clock -o corpus/perf_data/two-events.data -- sh -c "$work"
perf record -q -e cpu-clock -o - -- sh -c "$work" > corpus/perf_data/pipe.data
synth() { cargo run -q --manifest-path ../Cargo.toml --example perf-synth -- "$@"; }
synth corpus/perf_data/lbr.data 3 --entries 4
synth corpus/perf_data/lbr-hwidx-pipe.data 3 --entries 4 --hw-idx --pipe
perf script -i corpus/perf_data/lbr.data -F pid,tid,ip,brstack --show-mmap-events > corpus/perf_script/lbr.txt
perf script -i corpus/perf_data/plain.data -F ip --show-mmap-events > corpus/perf_script/ip.txt
