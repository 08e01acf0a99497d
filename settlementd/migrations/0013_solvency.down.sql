DROP TABLE IF EXISTS solvency_checks;
DROP TABLE IF EXISTS claims_state;
