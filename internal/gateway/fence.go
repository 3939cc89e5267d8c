package gateway

import (
	"context"
	"fmt"

	"github.com/wsrkit/wsrkit/rmp"
)

// HeaderFence is sent with each delivery POST of a shard node (-store
// etcd): "<shard>/<claim revision>". A later holder of the shard has a
// greater revision, so a consumer that remembers the greatest revision per
// shard can refuse a hand-off from an instance that was paused past its
// lease (the etcd fence refuses that instance's commits, not its POSTs).
const HeaderFence = "WSRKit-Fence"

// fence guards one shard node's deliveries: its token names the holding,
// and alive reports whether the instance's lease is still granted.
type fence struct {
	token string
	alive func(context.Context) error
}

type fenceKey struct{}

// fenceToken is the fence token ctx carries for a delivery; "" for none.
func fenceToken(ctx context.Context) string {
	t, _ := ctx.Value(fenceKey{}).(string)
	return t
}

// fencedConsumer hands a delivery on only while the instance's lease is
// known to be granted (D8, R92): an instance paused past its lease learns
// that before its next hand-off instead of making it and being fenced at
// the Taken commit. A refused hand-off is retried by the node; the lost
// lease stops the instance first.
type fencedConsumer struct {
	rmp.Consumer
	fence fence
}

func (c *fencedConsumer) Deliver(ctx context.Context, d rmp.Delivery) ([]byte, error) {
	if err := c.fence.alive(ctx); err != nil {
		return nil, fmt.Errorf("not handing out %s #%d: %w", d.Ref.Group.GroupID, d.Ref.Number, err)
	}
	return c.Consumer.Deliver(context.WithValue(ctx, fenceKey{}, c.fence.token), d)
}
