package main

import (
	"fmt"
	"syscall"
)

// spareFiles is what the tool holds open beside its connections: the
// daemon's files it reads (/proc), its HTTP clients, its own binary's.
const spareFiles = 64

// checkFiles refuses, before any load, a scenario whose connections this
// process cannot hold open: past the limit, dials fail one by one and a
// run can hang on them, saying nothing of why. Go raises the soft limit
// to the hard one at start; the hard one is what a process may hold.
func checkFiles(c config) error {
	need := 0
	switch c.scenario {
	case "idle", "reattach", "crowd-worker":
		need = c.conns
	case "fanout":
		need = c.viewers + 1
	case "persist":
		need = c.writers
	}
	var lim syscall.Rlimit
	if need == 0 || syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
		return nil
	}
	if uint64(need+spareFiles) <= lim.Cur {
		return nil
	}
	return fmt.Errorf("%s with %d connections needs about %d open files (a socket each, and %d to spare), "+
		"but this process may hold %d (RLIMIT_NOFILE; hard limit %d): split the load over several processes, each under its own limit",
		c.scenario, need, need+spareFiles, spareFiles, lim.Cur, lim.Max)
}
