package manifests

import (
	"context"
	"io"
	"runtime"
	"sync"

	"golang.org/x/sync/semaphore"
)

// Stream reads paths as Read does, within l, without holding every object:
// it calls yield with each object, in input order, and with what prepare
// made of it. prepare runs on the goroutines decoding the documents, one
// per core, each on objects of its own; yield runs on the caller's, one
// object at a time. An error of yield stops the reading and is returned.
// Held at once are the file being read (within l.Bytes) and the documents
// on their way from decoding to yield (within l.DocumentBytes, and a few
// per core), so that what stays of thousands of objects is what yield keeps.
func Stream[T any](l Limits, paths []string, stdin io.Reader, prepare func(Object) T, yield func(Object, T) error) error {
	return read(paths, stdin, newBudget(l), visit[T]{prepare: prepare, yield: yield})
}

// visit is what a read does with each object it decodes.
type visit[T any] struct {
	prepare func(Object) T
	yield   func(Object, T) error
}

// collect is the visit of Read and Decode: every object, in order.
func collect(out *[]Object) visit[struct{}] {
	return visit[struct{}]{
		prepare: func(Object) struct{} { return struct{}{} },
		yield: func(o Object, _ struct{}) error {
			*out = append(*out, o)
			return nil
		},
	}
}

// lookahead is how many decoded documents per core may wait for their turn
// to be yielded: enough to keep every core busy while yield works, few
// enough that a stream is never held whole.
const lookahead = 4

// decoded is one document's objects and what prepare made of each.
type decoded[T any] struct {
	objs     []Object
	prepared []T
	err      error
}

// decodeInOrder decodes documents on every core and yields their objects
// in input order, stopping at the first error in that order. A document is
// charged to the budget as it is decoded, so that a stream past the limits
// stops early, and the documents between decoding and yield hold at most
// DocumentBytes together (weighed by their size, which decoding
// multiplies), so that many cores do not multiply the memory a stream of
// large documents takes.
func decodeInOrder[T any](docs []*document, file string, b *budget, v visit[T]) error {
	type job struct {
		doc *document
		out chan decoded[T]
	}
	weight := func(d *document) int64 { return max(int64(len(d.text)), 1) }
	workers := min(runtime.GOMAXPROCS(0), len(docs))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inFlight := semaphore.NewWeighted(b.DocumentBytes)
	jobs := make(chan job)
	// queue holds the jobs in input order: its capacity bounds the lookahead.
	queue := make(chan job, workers*lookahead)

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				var d decoded[T]
				if d.objs, d.err = decodeDocument(j.doc, file, b); d.err == nil {
					d.prepared = make([]T, len(d.objs))
					for i, o := range d.objs {
						d.prepared[i] = v.prepare(o)
					}
				}
				j.out <- d // buffered: never blocks
			}
		})
	}
	wg.Go(func() {
		defer close(queue)
		defer close(jobs)
		for _, doc := range docs {
			// Fails only once cancelled; a document weighs at most DocumentBytes.
			if inFlight.Acquire(ctx, weight(doc)) != nil {
				return
			}
			j := job{doc: doc, out: make(chan decoded[T], 1)}
			select {
			case queue <- j:
			case <-ctx.Done():
				return
			}
			// Until cancelled, every queued job is decoded: the loop below
			// waits for each.
			select {
			case jobs <- j:
			case <-ctx.Done():
				return
			}
		}
	})

	var err error
	for j := range queue {
		d := <-j.out
		inFlight.Release(weight(j.doc))
		if err = d.err; err != nil {
			break
		}
		for i, o := range d.objs {
			if err = v.yield(o, d.prepared[i]); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	cancel()
	wg.Wait()
	return err
}
