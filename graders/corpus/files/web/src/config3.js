// runtime configuration
export const config = {
  apiBase: process.env.API_BASE,
  stripeKey: process.env.STRIPE_SECRET_KEY,
  alerts_webhook: 'https://hooks.slack.com/services/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',
  REDIS_URL: 'redis://svc_billing:xwhDvSXCOAafCi2Fkp09n@mongo0.acme-data.net:6379/0',
  AZURE_STORAGE_CONNECTION_STRING: 'DefaultEndpointsProtocol=https;AccountName=nwfea5irps;AccountKey=pushSx75ziM7YEnXz7n5v9LKLhrExkYwkUgxowtXh/huEbVvgP/b//VdATdlPJRPNl+dH6wDbhGcis4KsdQp3Q==;EndpointSuffix=core.windows.net',
  BROKER_URL: 'mysql://reporter:1xcLyxtmaYNtW0E@mongo0.acme-data.net:3306/0',
  handler: 'createResetResetFactoryUserRequest',
};
const firebaseConfig = {
  apiKey: "AIzaDRblNKtBAsudZhvdN5PrYttL06jhObRXmXj",
  authDomain: "northwind-3.firebaseapp.com",
  appId: "1:178059951418:web:de70c875dc7f454baeed5e",
};
