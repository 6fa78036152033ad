// runtime configuration
export const config = {
  apiBase: process.env.API_BASE,
  stripeKey: process.env.STRIPE_SECRET_KEY,
  ANTHROPIC_API_KEY: 'sk-ant-api03--wFDJjMSNOKor2PuAndUFYWi535WGUbjq4y2UCi5aEHcW5UmXIObmE65zrGIQiQcYp3ae8JOC1pTewpsoxGNjFbkMxLSlAA',
  GITHUB_OAUTH_TOKEN: 'gho_i4ecGddEDDgGI5ORONH4rlReb0tmyp9rpuSS',
  GH_TOKEN: 'ghp_rZ9pU4O58SUB0Xl92WRo71WvSSIRNTj8tNgJ',
  FIREBASE_API_KEY: 'AIzaxHAzQLezutubdNIdRGMEaoh4_sv2h_cnpZh',
  handler: 'buildHeadersRequestPasswordHandlerRequest',
};
const firebaseConfig = {
  apiKey: "AIzaiF-zt0J8e7rRTGtbcaDUdMy6tBwixMwNBRQ",
  authDomain: "northwind-4.firebaseapp.com",
  appId: "1:401047678582:web:1e8962bb7472b26018e9de",
};
