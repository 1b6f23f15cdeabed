/**
 * Lifetimes that more than one layer must agree on: the API issues access tokens with it, and
 * housekeeping may delete a spent grant only once every access token it issued has expired.
 */
export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;
