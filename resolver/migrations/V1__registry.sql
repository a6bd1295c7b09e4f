-- The registry, in SQL that SQLite and PostgreSQL both run. Integers are BIGINT (SQLite
-- stores every integer alike; PostgreSQL's INTEGER would not hold the milliseconds),
-- and IF NOT EXISTS lets an SQLite registry made before these migrations, whose tables
-- are these already, take this one as done.

-- Every registered Archive, keyed by the canonical spelling of its service IBI.
CREATE TABLE IF NOT EXISTS archives (
    serviceibi      TEXT PRIMARY KEY NOT NULL,
    -- The service IBI as the Archive spells it in its inclusion request: the path at
    -- which it is asked (a rep's canonical spelling may differ, e.g. without @80).
    spelling        TEXT,
    -- argon2id, a PHC string with its own salt: never the key itself.
    keyhash         TEXT NOT NULL,
    email           TEXT NOT NULL,
    registered      TEXT NOT NULL,
    address         TEXT,
    ip              TEXT,
    platformversion TEXT,
    reportedemail   TEXT,
    included        BIGINT NOT NULL DEFAULT 0,
    confirmation    TEXT,
    changed         TEXT,
    lastsuccess     TEXT,
    failures        BIGINT NOT NULL DEFAULT 0,
    latencyms       DOUBLE PRECISION,
    dormant         BIGINT NOT NULL DEFAULT 0
);

-- The location memory: which Archive last answered for an IBI; `used` and `verified`
-- in milliseconds since the epoch (`verified` 0: never).
CREATE TABLE IF NOT EXISTS locations (
    ibi      TEXT PRIMARY KEY NOT NULL,
    archive  TEXT NOT NULL,
    used     BIGINT NOT NULL,
    verified BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS locations_used ON locations (used);

-- The entries `ibi-resolver forget` removed, for running resolvers to drop them too;
-- `id` grows by one with each (the newest row is never pruned).
CREATE TABLE IF NOT EXISTS forgotten (
    id  BIGINT PRIMARY KEY NOT NULL,
    ibi TEXT NOT NULL,
    at  BIGINT NOT NULL
);

-- Two Archives claiming the Original of one IBI (Archives by their key).
CREATE TABLE IF NOT EXISTS conflicts (
    ibi      TEXT NOT NULL,
    holder   TEXT NOT NULL,
    claimant TEXT NOT NULL,
    first    BIGINT NOT NULL,
    last     BIGINT NOT NULL,
    times    BIGINT NOT NULL,
    PRIMARY KEY (ibi, claimant)
);
CREATE INDEX IF NOT EXISTS conflicts_last ON conflicts (last);
CREATE INDEX IF NOT EXISTS conflicts_claimant ON conflicts (claimant);
