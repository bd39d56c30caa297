// Package stage holds what passes between the pipeline's stages: a
// prepared transaction (Prepared, Txn) from the preparer to the
// coordinator, work (Work) from the coordinator to the applier's workers
// and back, the commit turns and low-water mark they share (Sequencer),
// and the error that stops replication at a transaction (ConflictError).
// It is a leaf: the stages import it and not each other, so the scheduler
// knows no applier type and the applier no scheduler type.
package stage
