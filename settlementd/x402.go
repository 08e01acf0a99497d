package main

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/crypto"

	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/daemon"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/facilitator"
	"github.com/tollgate-rpc/tollgate/shared/ethparse"
	"github.com/tollgate-rpc/tollgate/shared/meter"
)

// registerX402 adds the x402 facilitator routes (/x402/supported, /verify,
// /settle) when TOLLGATE_X402_RPC_URL is set (config.X402, facilitator.Open).
func registerX402(ctx context.Context, d *daemon.Daemon, cfg *config.Config, log *zap.Logger) (func(), error) {
	log = log.Named("x402")
	f, client, err := facilitator.Open(ctx, cfg.X402, log)
	if err != nil {
		return nil, err
	}
	if f == nil {
		log.Info("x402 facilitator off: TOLLGATE_X402_RPC_URL is not set (no /x402 routes)")
		return func() {}, nil
	}
	// Settlement transactions are recorded and unstuck like chain 137's
	// (TOLLGATE_TX_*); the leader follows those whose answer has gone.
	err = f.Track(d.Pool(), cfg.TxPolicy)
	if err == nil {
		err = d.Scheduler().Add("*/5 * * * * *", f.TxJob())
	}
	if err != nil {
		client.Close()
		return nil, err
	}
	// batch-settlement: the vouchers the gateways drew are claimed and swept
	// to the receiver on the schedule, signed by the receiver authorizer.
	if k := cfg.X402.ReceiverAuthorizerKey; k != "" && k != "0x" {
		key, kerr := ethparse.PrivateKey(k)
		if kerr != nil {
			client.Close()
			return nil, fmt.Errorf("TOLLGATE_X402_RECEIVER_AUTHORIZER_KEY is not a valid secp256k1 private key")
		}
		m, merr := meter.New(d.Redis(), meter.Config{Prefix: cfg.Prefix, Shards: cfg.RedisShards})
		if merr == nil {
			cj := f.ClaimJob(m, key)
			wj := cj.WatchJob()
			for _, c := range append(cj.Collectors(), wj.Collectors()...) {
				d.Registry().MustRegister(c)
			}
			merr = d.Scheduler().Add(cfg.X402.ClaimSchedule, cj)
			if merr == nil {
				// Channels follow the chain: a payer's withdrawal lowers what
				// vouchers may draw and is claimed ahead of its delay.
				merr = d.Scheduler().Add(cfg.X402.WatchSchedule, wj)
			}
		}
		if merr != nil {
			client.Close()
			return nil, merr
		}
		log.Info("x402 batch-settlement claims scheduled", zap.String("receiver_authorizer", crypto.PubkeyToAddress(key.PublicKey).Hex()),
			zap.String("schedule", cfg.X402.ClaimSchedule))
	}
	f.Register(d.API().Handle)
	if cfg.X402.GatewaySecret == "" {
		log.Warn("x402 facilitator: TOLLGATE_GATEWAY_SECRET is not set: cooperative refunds are refused (only the authenticated gateway may ask for one)")
	}
	log.Info("x402 facilitator registered", zap.String("relayer", f.Relayer().Hex()))
	return client.Close, nil
}
