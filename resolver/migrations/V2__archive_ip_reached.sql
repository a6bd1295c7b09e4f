-- Whether the resolver reached the Archive's service at the `ip` it declared (an
-- inclusionConfirmationRequest at that address answered `confirmation yes`): only then
-- does that address make it the home of the IBIps minted there.
ALTER TABLE archives ADD COLUMN ipreached BIGINT NOT NULL DEFAULT 0;
