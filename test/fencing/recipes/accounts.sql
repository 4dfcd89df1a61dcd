-- The schema the fencing recipes of docs/fencing.md write to. The regions are its text.

-- #region schema
CREATE TABLE accounts (
  id      text   PRIMARY KEY,
  balance bigint NOT NULL,
  fence   bigint NOT NULL DEFAULT 0 -- the highest fencing token that wrote the row
);
-- #endregion
