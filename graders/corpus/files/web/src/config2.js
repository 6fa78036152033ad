// runtime configuration
export const config = {
  apiBase: process.env.API_BASE,
  stripeKey: process.env.STRIPE_SECRET_KEY,
  aws_access_key_id: 'AKIAJIZUW7BDL7QOQE6T',
  MAPS_API_KEY: 'AIzaGCLkCVdwc0eAT5KNcJ7E5XmtFbjRWX0s-_l',
  SENDGRID_API_KEY: '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',
  RELEASE_GH_TOKEN: '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',
  handler: 'buildResolverKeyFactoryTokenRequest',
};
const firebaseConfig = {
  apiKey: "AIza0YQkKicpFGHYm5quIhBb7LqUivfypscJBcE",
  authDomain: "northwind-2.firebaseapp.com",
  appId: "1:844189846938:web:c3c1a18d7adc8cc98e083d",
};
