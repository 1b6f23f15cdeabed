import type { OAuthForm } from './client-auth.ts';
import { InvalidRequest, UnsupportedGrantType } from '../../services/oauth/errors.ts';
import type { GrantType, RunGrant } from './grant-type.ts';
import { authorizationCodeGrant } from './grant-authorization-code.ts';
import { refreshTokenGrant } from './grant-refresh-token.ts';

/** The grant types the token endpoint serves, by `grant_type`, in the order its errors list them. */
const grantTypes = new Map<string, GrantType>([
  ['authorization_code', authorizationCodeGrant],
  ['refresh_token', refreshTokenGrant],
]);

/** The grant the form asks for, with its parameters read: invalid_request without grant_type, unsupported_grant_type for others. */
export function checkGrantType(form: OAuthForm): RunGrant {
  if (!form.grant_type) throw new InvalidRequest('grant_type is required');
  const grantType = grantTypes.get(form.grant_type);
  if (!grantType) throw new UnsupportedGrantType(`grant_type ${form.grant_type} is not supported (${[...grantTypes.keys()].join(', ')})`);
  return grantType(form);
}
