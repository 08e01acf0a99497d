package caddymodule

import (
	"fmt"

	"github.com/caddyserver/caddy/v2"

	"github.com/tollgate-rpc/tollgate/caddymodule/config"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// intelConfig is the expanded intelligence and discovery configuration.
type intelConfig struct {
	heatmapPrice money.Units
}

func (h *Handler) provisionIntel(repl *caddy.Replacer) error {
	p := h.Intelligence.HeatmapPrice
	if p == "" {
		p = config.DefaultHeatmapPrice
	}
	u, err := money.Parse(p)
	if err != nil || u <= 0 {
		return fmt.Errorf("tollgate: heatmap_price %q must be a positive USDT amount", p)
	}
	h.intel.heatmapPrice = u
	return nil
}
