-- The authorization server's sign-in and consent forms are single-use: the first form of an
-- authorization request (its CSRF value and PKCE challenge, hashed) that ends in a code is
-- kept here until the form expires, and a second post of it gets no second code.
CREATE TABLE oauth_spent_forms (
    form_hash TEXT PRIMARY KEY NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX oauth_spent_forms_expiry ON oauth_spent_forms (expires_at);
