// Hardhat Network as a plain JSON-RPC node for the Go tests: the chain id
// comes from the test, accounts are funded by the test (hardhat_setBalance),
// and mining is driven by the test (evm_setAutomine, evm_mine).
module.exports = {
  networks: {
    hardhat: {
      chainId: Number(process.env.TOLLGATE_HARDHAT_CHAIN_ID || 31337),
      mining: { auto: false, interval: 0 },
    },
  },
};
