package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procCPU is a process's user+system CPU time in microseconds (from
// /proc/PID/stat, in clock ticks of 10 ms).
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) * 1e6 / 100
}

// procRSS is a process's resident set in bytes.
func procRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			kb, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			return kb * 1024
		}
	}
	return 0
}

// procsCPU is procCPU summed over pids (a cluster's nodes).
func procsCPU(pids []int) float64 {
	var t float64
	for _, p := range pids {
		t += procCPU(p)
	}
	return t
}

// procsSyscalls is the read and write system calls pids made, summed
// (syscr and syscw of /proc/PID/io): a storm's cost is mostly its writes
// and reads on loopback, so their count per connection says where it went.
func procsSyscalls(pids []int) (reads, writes float64) {
	for _, p := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", p))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(l, ": ")
			n, _ := strconv.ParseFloat(v, 64)
			switch {
			case ok && k == "syscr":
				reads += n
			case ok && k == "syscw":
				writes += n
			}
		}
	}
	return reads, writes
}

// procsRSS is procRSS summed over pids.
func procsRSS(pids []int) float64 {
	var t float64
	for _, p := range pids {
		t += procRSS(p)
	}
	return t
}

// treeCPU is the CPU time of pid and of its descendants, living (from
// /proc/PID/task/*/children) or exited and reaped by it (cutime, cstime):
// a PostgreSQL server's postmaster and its backends.
func treeCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	var t float64
	for _, i := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime
		v, _ := strconv.ParseFloat(f[i], 64)
		t += v
	}
	t = t * 1e6 / 100
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		cb, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		for _, c := range strings.Fields(string(cb)) {
			if cp, err := strconv.Atoi(c); err == nil {
				t += treeCPU(cp)
			}
		}
	}
	return t
}

// parsePIDs reads "N[,N…]"; empty is none.
func parsePIDs(s string) ([]int, error) {
	var pids []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("pid %q: %w", f, err)
		}
		pids = append(pids, p)
	}
	return pids, nil
}
