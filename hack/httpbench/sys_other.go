//go:build !linux

package main

import "os/exec"

func procCPU(int) float64     { return -1 }
func selfCPU() float64        { return -1 }
func procPeakRSS(int) int64   { return -1 }
func loadAvg() string         { return "?" }
func cpuModel() string        { return "" }
func dieWithParent(*exec.Cmd) {}
