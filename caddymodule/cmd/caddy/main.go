// Command caddy is Caddy with the standard modules and Tollgate's
// http.handlers.tollgate, the same binary xcaddy would produce (see xcaddy.json).
package main

import (
	_ "time/tzdata"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	// The module root registers every Tollgate module, exactly as the
	// xcaddy recipe's --with github.com/tollgate-rpc/tollgate does.
	_ "github.com/tollgate-rpc/tollgate"
)

func main() { caddycmd.Main() }
