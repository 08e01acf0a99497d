-- The operators' half of revenue no registered node served (configured
-- providers, the edge cache) is the platform's, booked per epoch; only
-- rounding carries into the next epoch (the revised split).
-- platform_units stays the 30 % share; settlement transfers both to the
-- platform wallet. The money invariant gains the new part.
ALTER TABLE epochs ADD COLUMN platform_operators_units bigint NOT NULL DEFAULT 0 CHECK (platform_operators_units >= 0);
ALTER TABLE epochs DROP CONSTRAINT epochs_check;
ALTER TABLE epochs ADD CONSTRAINT epochs_check CHECK (state = 'open' OR (
    total_units IS NOT NULL AND closed_at IS NOT NULL
    AND operators_units + platform_units + pool_units = total_units
    AND distributed_units + carry_out_units + platform_operators_units = operators_units + carry_in_units));
