#!/usr/bin/env bash
# examples/ring.c as a Slurm batch job: srun starts the ranks with Slurm's PMIx plugin, from which
# ibmsg_world_init takes rank and size (include/ibmsg/world.h).
#
#   sbatch [-n TASKS] examples/sbatch_ring.sh [RING [LAPS [BYTES]]]
#
# RING is the ring program (default build-examples/ring, built as in README.md); LAPS and BYTES
# its -n and -s. More tasks than CPUs need sbatch --overcommit (srun inherits it). Launchers and
# what they do when a rank leaves: docs/scaling.md, "Launchers".
#SBATCH --job-name=ibmsg-ring
#SBATCH --ntasks=4
#SBATCH --time=00:05:00
#SBATCH --output=ibmsg-ring-%j.out
set -euo pipefail
ring=${1:-build-examples/ring}
laps=${2:-100}
bytes=${3:-64}
# --kill-on-bad-exit=1: a rank that fails ends the step at once, instead of leaving the others
# waiting for it until --time runs out (Slurm's default, KillOnBadExit=0, keeps them running).
srun --mpi=pmix --kill-on-bad-exit=1 "$ring" -n "$laps" -s "$bytes"
