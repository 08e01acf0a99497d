package caddymodule_test

import "testing"

// TestMeteringSharded re-runs representative metering tests through the
// gateway with redis_shards 4 on the one test Redis (which accepts every
// slot): free tier and subnet cap, keys and usage, credits with refunds and
// revenue, concurrent spending, admin credit/debit and free-tier limits,
// batch-settlement vouchers, a socket signed in with SIWX (its nonce and
// bundle on the wallet's shard, its rate gate on the address's). The layout, scripts and split decisions are a
// cluster's; only the masters are one.
func TestMeteringSharded(t *testing.T) {
	defer func(n int) { meteringShards = n }(meteringShards)
	meteringShards = 4
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"TrustedProxySubnetCapAndBatches", TestTrustedProxySubnetCapAndBatches},
		{"KeyCreationValidationAndUsage", TestKeyCreationValidationAndUsage},
		{"CreditsRefundAndRevenue", TestCreditsRefundAndRevenue},
		{"ConcurrentSpendOverHTTP", TestConcurrentSpendOverHTTP},
		{"AdminCreditDebit", TestAdminCreditDebit},
		{"AdminFreeTier", TestAdminFreeTier},
		{"BatchSettlementVouchersThroughTheGateway", TestBatchSettlementVouchersThroughTheGateway},
		{"SocketSignedInWithSIWX", TestSocketSignedInWithSIWX},
	} {
		t.Run(tc.name, tc.fn)
	}
}
