package caddymodule

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("tollgate", parseCaddyfile)
	// Before reverse_proxy so one site block can hold both: our paths are
	// answered here, everything else falls through to the proxy.
	httpcaddyfile.RegisterDirectiveOrder("tollgate", httpcaddyfile.Before, "reverse_proxy")
}

func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	var t Handler
	err := t.UnmarshalCaddyfile(h.Dispenser)
	return &t, err
}
