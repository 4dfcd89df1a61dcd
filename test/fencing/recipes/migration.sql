-- #region migration
ALTER TABLE accounts ADD COLUMN fence bigint NOT NULL DEFAULT 0;
-- #endregion
