package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// jsTarget is the durable peer (bench/peers/jetstream): NATS JetStream on
// file storage. A channel is a subject of the stream BENCH; a publisher
// waits for each publish's ack (the message is in the file store); a
// viewer reads through an ordered consumer per channel, from new messages
// on, so it sees what was stored and nothing before.
type jsTarget struct {
	url        string
	serverPIDs []int
}

func (j *jsTarget) pids() []int { return j.serverPIDs }
func (j *jsTarget) close()      {}

// channel names a subject: one token, so the name's dots and spaces go.
func (j *jsTarget) channel(_ context.Context, name string) (string, error) {
	return "s." + strings.NewReplacer(".", "_", " ", "_", "*", "_", ">", "_").Replace(name), nil
}

func (j *jsTarget) connect() (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(j.url, nats.MaxReconnects(-1))
	if err != nil {
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

func (j *jsTarget) viewer(ctx context.Context, channels []string, onText func(string, string)) (func(), error) {
	nc, js, err := j.connect()
	if err != nil {
		return nil, err
	}
	var stops []func()
	for _, ch := range channels {
		cons, err := js.OrderedConsumer(ctx, "BENCH", jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{ch}, DeliverPolicy: jetstream.DeliverNewPolicy})
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("jetstream consumer: %w", err)
		}
		cc, err := cons.Consume(func(m jetstream.Msg) { onText(ch, string(m.Data())) })
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("jetstream consume: %w", err)
		}
		stops = append(stops, cc.Stop)
	}
	return func() {
		for _, s := range stops {
			s()
		}
		nc.Close()
	}, nil
}

func (j *jsTarget) publisher(_ context.Context) (func(context.Context, string, string) error, func(), error) {
	nc, js, err := j.connect()
	if err != nil {
		return nil, nil, err
	}
	pub := func(ctx context.Context, channel, text string) error {
		_, err := js.Publish(ctx, channel, []byte(text))
		return err
	}
	return pub, nc.Close, nil
}
