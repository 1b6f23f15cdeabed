window.addEventListener('load', () => {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
    // No badge from validator.swagger.io: the page loads nothing from elsewhere.
    validatorUrl: null,
    oauth2RedirectUrl: window.location.origin + '/docs/oauth2-redirect.html',
  });
  // Authorize runs the authorization code flow with PKCE as the built-in public client `api-docs`
  // (api/rest/docs-client.ts): no secret, the consent screen every time.
  window.ui.initOAuth({
    clientId: 'api-docs',
    usePkceWithAuthorizationCodeGrant: true,
    scopes: ['data:read'],
    appName: 'API reference',
  });
});
