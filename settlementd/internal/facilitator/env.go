package facilitator

import (
	"context"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/ethclient"
	"go.uber.org/zap"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/chain"
	"github.com/tollgate-rpc/tollgate/settlementd/internal/config"
	"github.com/tollgate-rpc/tollgate/shared/ethparse"
	"github.com/tollgate-rpc/tollgate/shared/x402"
)

// ChainID is the network this facilitator settles on: Base, eip155:8453
// (x402 v1 "base").
const ChainID = 8453

// Open builds the facilitator from its settings (config.X402, which
// config.Load reads from the environment):
//
//	TOLLGATE_X402_RPC_URL        chain-8453 JSON-RPC (chain id checked on dial); unset: no facilitator (nil, nil)
//	TOLLGATE_X402_RELAYER_KEY    hex key that sends transferWithAuthorization and pays its gas
//	TOLLGATE_X402_TOKEN_NAME     EIP-712 domain name of the token (default "USD Coin")
//	TOLLGATE_X402_TOKEN_VERSION  EIP-712 domain version (default "2")
//	TOLLGATE_X402_ASSET, TOLLGATE_X402_PAY_TO  the operator's offer (shared/x402.Offer; payTo required)
//	TOLLGATE_GATEWAY_SECRET[_PREVIOUS][_FILE]  the gateway's shared secret (guard.go)
//
// Base is its own chain, so the facilitator has its own client (the
// chain-137 client is shared by the chain jobs and the API); the caller
// closes it.
func Open(ctx context.Context, s config.X402, log *zap.Logger) (*Facilitator, *ethclient.Client, error) {
	url := strings.TrimSpace(s.RPCURL)
	if url == "" {
		return nil, nil, nil
	}
	if hexKey := strings.TrimSpace(s.RelayerKey); hexKey == "" || hexKey == "0x" || hexKey == "0X" {
		return nil, nil, fmt.Errorf("facilitator: TOLLGATE_X402_RPC_URL is set but TOLLGATE_X402_RELAYER_KEY is empty")
	}
	// ethparse.PrivateKey: the one key reader (with or without 0x, its
	// error never repeats the secret).
	key, err := ethparse.PrivateKey(s.RelayerKey)
	if err != nil {
		return nil, nil, fmt.Errorf("facilitator: TOLLGATE_X402_RELAYER_KEY is not a valid secp256k1 private key (64 hex digits)")
	}
	offer, err := x402.OfferFromEnv(ChainID, func(k string) string {
		switch k {
		case x402.EnvAsset:
			return s.Asset
		case x402.EnvPayTo:
			return s.PayTo
		}
		return ""
	})
	if err != nil {
		return nil, nil, fmt.Errorf("facilitator: %w", err)
	}
	client, err := chain.Dial(ctx, url, ChainID)
	if err != nil {
		return nil, nil, fmt.Errorf("facilitator: %w", err)
	}
	f, err := New(Config{Backend: client, ChainID: ChainID, Relayer: key, RPCURL: url, Log: log,
		TokenName: strings.TrimSpace(s.TokenName), TokenVersion: strings.TrimSpace(s.TokenVersion),
		Offer: offer, GatewaySecret: s.GatewaySecret, GatewaySecretPrevious: s.GatewaySecretPrevious,
		GasCap: s.GasCap, RateLimit: s.RateLimit})
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return f, client, nil
}
