package main

// The wallet's key: an encrypted go-ethereum keystore file (its password
// from a file, an environment variable or the terminal) or a file holding
// the raw hex key. Never a command-line argument: arguments are visible to
// every user of the machine (ps, /proc/*/cmdline) and stay in shell history.
// Like ssh with its identity files, a secret file that others may read is
// refused: a key that leaked that way is no longer the operator's alone.

import (
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// Environment variables (each also a flag; the flag wins).
const (
	envKeystore     = "TOLLGATE_NODE_KEYSTORE"      // encrypted keystore file
	envKeyFile      = "TOLLGATE_NODE_KEY_FILE"      // raw hex key file
	envPassword     = "TOLLGATE_NODE_PASSWORD"      // the keystore's password
	envPasswordFile = "TOLLGATE_NODE_PASSWORD_FILE" // a file holding it
)

// keySource says where the wallet's key is.
type keySource struct {
	Keystore     string // encrypted keystore file
	KeyFile      string // raw hex key file
	PasswordFile string // the keystore's password, first line of this file
	Password     string // or this value (from the environment)
	hasPassword  bool
	// prompt reads a password from the terminal; nil when there is none.
	prompt func(prompt string) (string, error)
}

// errNoKey: a command that signs was given no key.
var errNoKey = errors.New("no wallet key: name an encrypted keystore file (--keystore or " + envKeystore +
	") or a raw key file (--key-file or " + envKeyFile + "); a key is never taken on the command line")

// configured reports whether a key source was named.
func (k keySource) configured() bool { return k.Keystore != "" || k.KeyFile != "" }

// Load reads the key.
func (k keySource) Load() (*ecdsa.PrivateKey, error) {
	switch {
	case k.Keystore != "" && k.KeyFile != "":
		return nil, errors.New("both a keystore and a raw key file are named: use one")
	case k.KeyFile != "":
		return loadRawKey(k.KeyFile)
	case k.Keystore != "":
		return k.loadKeystore()
	}
	return nil, errNoKey
}

// checkPrivate refuses a secret file that others may read or write, or
// that belongs to another user, as ssh refuses such an identity file.
func checkPrivate(path, what string) error {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s %s does not exist", what, path)
		}
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s %s is not a regular file", what, path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s %s is accessible by others (permissions %04o): it must be readable by you only; run chmod 600 %s",
			what, path, perm, path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() && st.Uid != 0 {
		return fmt.Errorf("%s %s belongs to another user (uid %d): it must be yours", what, path, st.Uid)
	}
	return nil
}

// readSecret reads a private file's content.
func readSecret(path, what string) ([]byte, error) {
	if err := checkPrivate(path, what); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	return b, nil
}

func loadRawKey(path string) (*ecdsa.PrivateKey, error) {
	b, err := readSecret(path, "key file")
	if err != nil {
		return nil, err
	}
	k, err := ethparse.PrivateKey(string(b)) // the error never repeats the secret
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return k, nil
}

// password returns the keystore's password: the file's first line, the
// environment's value, or what the terminal is told.
func (k keySource) password(prompt string) (string, error) {
	switch {
	case k.PasswordFile != "" && k.hasPassword:
		return "", errors.New("both " + envPassword + " and a password file are set: use one")
	case k.PasswordFile != "":
		b, err := readSecret(k.PasswordFile, "password file")
		if err != nil {
			return "", err
		}
		line, _, _ := strings.Cut(string(b), "\n")
		return strings.TrimSuffix(line, "\r"), nil
	case k.hasPassword:
		return k.Password, nil
	case k.prompt != nil:
		return k.prompt(prompt)
	}
	return "", errors.New("no keystore password: set " + envPasswordFile + " (a file readable by you only) or " + envPassword +
		", or run on a terminal to be asked")
}

func (k keySource) loadKeystore() (*ecdsa.PrivateKey, error) {
	b, err := readSecret(k.Keystore, "keystore")
	if err != nil {
		return nil, err
	}
	pass, err := k.password("Password for " + k.Keystore + ": ")
	if err != nil {
		return nil, err
	}
	key, err := keystore.DecryptKey(b, pass)
	switch {
	case errors.Is(err, keystore.ErrDecrypt):
		return nil, fmt.Errorf("keystore %s: wrong password (the key could not be decrypted)", k.Keystore)
	case err != nil:
		// The cause is not repeated: a JSON error quotes the file's bytes.
		return nil, fmt.Errorf("keystore %s is not a keystore file go-ethereum can read (encrypted JSON, version 3)", k.Keystore)
	}
	// The file names its address in the clear (Address reads it without
	// the password): it must be the key's.
	if named, err := k.Address(); err != nil || named != key.Address {
		return nil, fmt.Errorf("keystore %s: the address it names is not its key's", k.Keystore)
	}
	return key.PrivateKey, nil
}

// newPassword asks for a new keystore's password: from the file or the
// environment, else twice on the terminal.
func (k keySource) newPassword() (string, error) {
	if k.PasswordFile != "" || k.hasPassword || k.prompt == nil {
		p, err := k.password("")
		if err == nil && p == "" {
			err = errors.New("the keystore password is empty")
		}
		return p, err
	}
	p, err := k.prompt("Password for the new keystore: ")
	if err != nil {
		return "", err
	}
	again, err := k.prompt("The same password again: ")
	if err != nil {
		return "", err
	}
	if p != again {
		return "", errors.New("the two passwords differ")
	}
	if p == "" {
		return "", errors.New("the keystore password is empty")
	}
	return p, nil
}

// writeKeystore encrypts key with go-ethereum's standard scrypt parameters
// into a new file at path (mode 0600; an existing file is never replaced).
func writeKeystore(path string, key *ecdsa.PrivateKey, pass string, scryptN, scryptP int) (common.Address, error) {
	id, err := uuid.NewRandom()
	if err != nil {
		return common.Address{}, err
	}
	addr := crypto.PubkeyToAddress(key.PublicKey)
	b, err := keystore.EncryptKey(&keystore.Key{Id: id, Address: addr, PrivateKey: key}, pass, scryptN, scryptP)
	if err != nil {
		return common.Address{}, err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return common.Address{}, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return common.Address{}, fmt.Errorf("%s exists: a keystore is never overwritten (choose another --out)", path)
		}
		return common.Address{}, err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(path)
		return common.Address{}, err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return common.Address{}, err
	}
	return addr, nil
}

// The keystore's key derivation: go-ethereum's standard scrypt parameters
// (what geth and clef write).
const (
	keystoreScryptN = keystore.StandardScryptN
	keystoreScryptP = keystore.StandardScryptP
)

// Address is the wallet's address. A keystore file names it in the clear,
// so commands that only need the address (proof, address) ask for no
// password; the address is checked against the key whenever it is
// decrypted to sign.
func (k keySource) Address() (common.Address, error) {
	if k.Keystore == "" || k.KeyFile != "" {
		key, err := k.Load()
		if err != nil {
			return common.Address{}, err
		}
		return crypto.PubkeyToAddress(key.PublicKey), nil
	}
	b, err := readSecret(k.Keystore, "keystore")
	if err != nil {
		return common.Address{}, err
	}
	var f struct {
		Address string `json:"address"`
	}
	if err := json.Unmarshal(b, &f); err != nil || f.Address == "" {
		return common.Address{}, fmt.Errorf("keystore %s is not a keystore file (no address)", k.Keystore)
	}
	s := strings.ToLower(f.Address)
	if !strings.HasPrefix(s, "0x") {
		s = "0x" + s // geth writes the 40 digits alone
	}
	a, err := ethparse.Address(s)
	if err != nil {
		return common.Address{}, fmt.Errorf("keystore %s: %w", k.Keystore, err)
	}
	return a, nil
}
