"""The kernel the engines share: fit counts, queue capabilities, admission order, blockers."""
