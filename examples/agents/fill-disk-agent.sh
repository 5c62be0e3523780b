#!/bin/sh
# Fills the file system its worktree is on, then exits 0: the run's end must not be lost.
dd if=/dev/zero of=fill.bin bs=64k 2>/dev/null
echo "the disk is full"
exit 0
