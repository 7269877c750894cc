#!/bin/bash
# clistart.sh: the client CPU of short commands, several builds interleaved
# per command, each build with a warm private daemon of its own.
#
#   bench/clistart.sh ROUNDS NAME:BIN:HOME [NAME:BIN:HOME ...]
#
# e.g. bench/clistart.sh 3 old:/tmp/old/runbox:/tmp/hold new:bin/runbox:/tmp/hnew
# Prints, per round and command, perf stat's task-clock (ms, mean of 40
# runs) and its variation. Needs perf. The run lines add runs to each
# home's store (-w DIR is /tmp/clistart-wdir).
set -eu
rounds=$1
shift
builds=("$@")
mkdir -p /tmp/clistart-wdir
cmds=("run -d -w /tmp/clistart-wdir -- true" "status @last" "ls" "exec --help" "ls --help" "--help")
for v in "${builds[@]}"; do # start each daemon, leave a run for status @last
	IFS=: read -r _ bin home <<<"$v"
	mkdir -p "$home"
	"$bin" --home "$home" run -d -- true >/dev/null
	"$bin" --home "$home" ls >/dev/null
done
for r in $(seq "$rounds"); do
	for c in "${cmds[@]}"; do
		for v in "${builds[@]}"; do
			IFS=: read -r name bin home <<<"$v"
			# shellcheck disable=SC2086 # c is split into words on purpose
			out=$(perf stat -r 40 -x, -e task-clock "$bin" --home "$home" $c 2>&1 >/dev/null | grep task-clock)
			printf "%d\t%-34s\t%-10s\t%s ms (+-%s)\n" "$r" "$c" "$name" \
				"$(echo "$out" | cut -d, -f1)" "$(echo "$out" | cut -d, -f4)"
		done
	done
done
