package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// machine describes where the benchmarks ran.
type machine struct {
	cpu        string
	cores      int
	gomaxprocs int
	memory     string
	goVersion  string
	osArch     string
}

func describeMachine() machine {
	m := machine{cpu: "unknown CPU", cores: runtime.NumCPU(), gomaxprocs: runtime.GOMAXPROCS(0),
		goVersion: runtime.Version(), osArch: runtime.GOOS + "/" + runtime.GOARCH}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.cpu = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if total, err := meminfoKB("MemTotal"); err == nil {
		m.memory = fmt.Sprintf("%.1f GiB", float64(total)/(1<<30))
	}
	return m
}

func (m machine) String() string {
	s := fmt.Sprintf("%s, %d cores (GOMAXPROCS %d), %s, %s", m.cpu, m.cores, m.gomaxprocs, m.osArch, m.goVersion)
	if m.memory != "" {
		s += ", " + m.memory + " RAM"
	}
	return s
}

func meminfoKB(field string) (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != field {
			continue
		}
		var kb int64
		if _, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb); err != nil {
			return 0, err
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no %s in /proc/meminfo", field)
}

// loadAverage returns the 1, 5 and 15 minute load averages as text, or "".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
