// Deliberate mistakes for the first Cadre run: SQL built from input, and input evaluated as code.
function findOrders(customer) {
  return "SELECT * FROM orders WHERE customer = '" + customer + "'";
}

function applyDiscount(price, discount) {
  return price - eval(discount);
}

module.exports = { findOrders, applyDiscount };
