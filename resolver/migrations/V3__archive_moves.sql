-- Moves of each Archive: an inclusion at another address than the one recorded. How
-- many were made, when the last one was and the address it left; and how many were
-- refused (a new address while the old one still answered as the Archive). A move made
-- by whoever holds the Archive's key sends its IBIs elsewhere: the operator sees it in
-- `ibi-resolver archives`.
ALTER TABLE archives ADD COLUMN moves BIGINT NOT NULL DEFAULT 0;
ALTER TABLE archives ADD COLUMN movedat TEXT;
ALTER TABLE archives ADD COLUMN movedfrom TEXT;
ALTER TABLE archives ADD COLUMN movesrefused BIGINT NOT NULL DEFAULT 0;
