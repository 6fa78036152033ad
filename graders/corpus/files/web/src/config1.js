// runtime configuration
export const config = {
  apiBase: process.env.API_BASE,
  stripeKey: process.env.STRIPE_SECRET_KEY,
  ANTHROPIC_API_KEY: 'sk-ant-api03-WtZwcjNc2qNinVOjJL2T0G6gbCLkgb4ZaveiMeNdSwWXNuK9e_6f9zzgP0KP0AERVXwZttaGQZZNJ6_9WgYKNL_hu2z4dAA',
  GITHUB_PAT: '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',
  SENDGRID_API_KEY: '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',
  NPM_TOKEN: 'npm_Yn7bdhUwTIRBcGreZ9ia5XHJYAymPQtIb8dU',
  handler: 'createRequestSecretResolverResolverHandler',
};
const firebaseConfig = {
  apiKey: "AIzajEyZyMwzkuMBX6Vlx686k6bFSDxKV9WaZHP",
  authDomain: "northwind-1.firebaseapp.com",
  appId: "1:513066625861:web:49b8caaef0767286627636",
};
