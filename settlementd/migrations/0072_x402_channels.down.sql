DROP TABLE IF EXISTS x402_channel_deposits;
DROP TABLE IF EXISTS x402_channels;
