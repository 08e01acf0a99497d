package evidence

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/httpx"
)

// Page answers one page of a node's evidence (limit 1…50, default 20;
// cursor from the previous page's next_cursor). It writes the error itself
// and returns ok=false then. Shared by the admin's GET
// /admin/nodes/{id}/evidence and the operator's GET /api/nodes/{id}/evidence.
func Page(w http.ResponseWriter, r *http.Request, q Querier, node string) (items []Item, next *string, ok bool) {
	limit := 20
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxList {
			httpx.Error(w, http.StatusBadRequest, "invalid_limit", "limit must be 1…"+strconv.Itoa(MaxList))
			return nil, nil, false
		}
		limit = n
	}
	var cur *Cursor
	if v := r.URL.Query().Get("cursor"); v != "" {
		b, err := base64.RawURLEncoding.DecodeString(v)
		ts, id, found := strings.Cut(string(b), "|")
		t, err2 := time.Parse(time.RFC3339Nano, ts)
		if err != nil || err2 != nil || !found || !httpx.StorableText(id) {
			httpx.Error(w, http.StatusBadRequest, "invalid_cursor", "cursor is not a cursor this API returned")
			return nil, nil, false
		}
		cur = &Cursor{TS: t, ID: id}
	}
	items, err := List(r.Context(), q, node, limit, cur)
	if err != nil {
		httpx.Error(w, http.StatusServiceUnavailable, "database_unavailable", "the evidence could not be read")
		return nil, nil, false
	}
	if len(items) == limit {
		last := items[len(items)-1]
		c := base64.RawURLEncoding.EncodeToString([]byte(last.Time + "|" + last.ID))
		next = &c
	}
	return items, next, true
}
