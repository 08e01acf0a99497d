package config

import "testing"

// The endpoint ownership proof is required unless private
// nodes are allowed (development), where it is off unless asked for; off
// is refused in production.
func TestNodeProofSetting(t *testing.T) {
	for _, c := range []struct {
		env     map[string]string
		proof   bool
		wantErr bool
	}{
		{map[string]string{}, true, false},
		{map[string]string{"TOLLGATE_ALLOW_PRIVATE_NODES": "1"}, false, false},
		{map[string]string{"TOLLGATE_ALLOW_PRIVATE_NODES": "1", "TOLLGATE_NODE_PROOF": "required"}, true, false},
		{map[string]string{"TOLLGATE_NODE_PROOF": "off"}, false, true},
		{map[string]string{"TOLLGATE_NODE_PROOF": "maybe"}, false, true},
		{map[string]string{"TOLLGATE_NODE_REGISTER_PER_HOUR": "x"}, true, true},
	} {
		cfg, err := load(t, c.env)
		if (err != nil) != c.wantErr {
			t.Errorf("%v: error %v", c.env, err)
			continue
		}
		if err == nil && cfg.Nodes.Proof != c.proof {
			t.Errorf("%v: proof %v, want %v", c.env, cfg.Nodes.Proof, c.proof)
		}
	}
}
