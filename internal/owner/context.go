package owner

import "context"

// ctxKey is the context key for the Owner. Unexported, so With and From
// are the only way in and out.
type ctxKey struct{}

// With returns a copy of ctx carrying o. Bind the owner once, where the
// work enters warden (terminal, chat adapter, scheduler, worker
// connection), and pass the context down; goroutines started for the work
// get the same context.
//
// Binding the zero Owner masks any owner of an outer context: From then
// reports none. Long-lived entry points serving many sessions can use
// that to make sure nothing from an enclosing scope leaks in.
func With(ctx context.Context, o Owner) context.Context {
	return context.WithValue(ctx, ctxKey{}, o)
}

// From returns the owner bound to ctx. ok is false when no owner, or the
// zero Owner, was bound; callers must then treat the work as unowned and
// deny anything not plainly safe (invariant 2), never substitute a
// default owner.
func From(ctx context.Context) (o Owner, ok bool) {
	o, _ = ctx.Value(ctxKey{}).(Owner)
	if !o.Valid() {
		return Owner{}, false
	}
	return o, true
}
