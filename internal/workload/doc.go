// Package workload holds scripted workloads whose dependency structure is
// known by construction: each declares the exact critical path it produces
// under the dependency modes where that does not depend on timing. Tests
// run them on a sandboxed source to check the analyzer, and to check that
// replication reproduces the source exactly.
package workload
