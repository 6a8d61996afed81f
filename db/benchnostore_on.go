//go:build benchnostore

package db

import "context"

// KeepsNothing: this daemon was built with -tags benchnostore, for
// bench/run alone. Its writer runs every batch as always (BEGIN, each
// request's checks, the heads kept in memory, the receipts and the events
// handed on) but writes nothing: no flush, and a ROLLBACK where the COMMIT
// was (keepsNothing). It is albedo's path with the store taken out, the
// bound any store on it can reach (docs/benchmarks.md, goal 2). It keeps
// nothing and must never serve anyone.
const KeepsNothing = true

// buildKeeper is the keeper of this build's writers: nothing kept.
func buildKeeper() keeper { return keepsNothing{} }

// keepsNothing is the writer's keeper in the bench's build with its store
// taken out: it flushes nothing and rolls back where durable commits.
type keepsNothing struct{}

func (keepsNothing) flush(context.Context, *batchState, *batchTx, []*request) (int, error) {
	return 0, nil
}

func (keepsNothing) commit(_ context.Context, tx *batchTx) error {
	tx.rollback() // what it wrote is dropped; the batch is answered as committed
	return nil
}
