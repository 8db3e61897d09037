package robots

// testToken is the product token the tests ask about.
const testToken = "LohiSoftBot"
