-- Epochs closed under the revised rule (platform_operators_units > 0) do not
-- satisfy the old invariant; the old check is restored as NOT VALID for them.
ALTER TABLE epochs DROP CONSTRAINT epochs_check;
ALTER TABLE epochs ADD CONSTRAINT epochs_check CHECK (state = 'open' OR (
    total_units IS NOT NULL AND closed_at IS NOT NULL
    AND operators_units + platform_units + pool_units = total_units
    AND distributed_units + carry_out_units = operators_units + carry_in_units)) NOT VALID;
ALTER TABLE epochs DROP COLUMN IF EXISTS platform_operators_units;
